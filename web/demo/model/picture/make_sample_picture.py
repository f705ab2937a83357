#!/usr/bin/env python3
"""Draws the demo's bundled picture, sample-picture.png: a red ball on a checked floor under a
sky with a sun, 128 x 96 pixels, drawn from shapes here (no photograph): CC0, like this script.
Run: /usr/bin/python3 web/demo/model/picture/make_sample_picture.py"""
import math
import os
from PIL import Image, ImageDraw

W, H = 128, 96
img = Image.new('RGB', (W, H))
px = img.load()
for y in range(H):
    for x in range(W):
        if y < 56:  # sky, lighter towards the horizon
            t = y / 56
            px[x, y] = (int(70 + 110 * t), int(130 + 90 * t), 235)
        else:  # a checked floor
            light = ((x // 16) + (y - 56) // 10) % 2 == 0
            px[x, y] = (200, 190, 150) if light else (120, 110, 80)
draw = ImageDraw.Draw(img)
draw.ellipse((96, 8, 116, 28), fill=(255, 220, 60))  # the sun
for k in range(8):  # its rays
    a = k * math.pi / 4
    draw.line((106 + 13 * math.cos(a), 18 + 13 * math.sin(a),
               106 + 18 * math.cos(a), 18 + 18 * math.sin(a)), fill=(255, 220, 60), width=2)
draw.ellipse((30, 40, 66, 76), fill=(200, 30, 40), outline=(90, 10, 20), width=2)  # the ball
draw.ellipse((40, 47, 49, 55), fill=(250, 170, 170))  # its highlight
img.save(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'sample-picture.png'),
         optimize=True)
